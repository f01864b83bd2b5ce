from lightmigrate.cli import main

main(prog_name="lightmigrate")
