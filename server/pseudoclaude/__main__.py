import sys

from pseudoclaude.cli import main

sys.exit(main())
