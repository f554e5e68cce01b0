"""minicloud's base layer, imported by every other package and importing nothing of minicloud: the state
folder (:mod:`.paths`), the settings fixed at the first ``up`` (:mod:`.settings`), the WSGI server and its
primitives (:mod:`.wsgi`) and clouds.yaml with the SDK connections it gives (:mod:`.clouds`)."""
