from fabric_sim.cli import main

raise SystemExit(main())
