"""What runs a minicloud: the Python API (:mod:`.control`), bringing the services up and down
(:mod:`.lifecycle`, :mod:`.processes`), the entry point of every process it starts (:mod:`.runner`),
the WSGI server (:mod:`.wsgi`), the state folder (:mod:`.paths`), the settings fixed at the first
``up`` (:mod:`.settings`) and clouds.yaml (:mod:`.clouds`)."""
