"""What runs a minicloud, on top of every other package: the Python API (:mod:`.control`), bringing the
services up and down (:mod:`.lifecycle`, :mod:`.processes`) and the entry point of every process it starts
(:mod:`.runner`). The state folder, settings, WSGI server and clouds.yaml are in :mod:`minicloud.core`."""
