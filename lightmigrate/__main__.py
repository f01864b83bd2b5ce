from lightmigrate.cli import run_main

run_main()
