from minicloud.cli import main

raise SystemExit(main())
