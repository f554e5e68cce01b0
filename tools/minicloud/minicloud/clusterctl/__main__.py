import sys

from minicloud.clusterctl.cli import main

sys.exit(main())
