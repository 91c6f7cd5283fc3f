"""``python -m pseudoclaude.fake_model``: the same as ``pseudoclaude fake-model``."""

import sys

from pseudoclaude.fake_model.command import main

sys.exit(main())
