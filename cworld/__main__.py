from cworld.cli.main import main

main()
