#!/usr/bin/env python3
"""scripts/check-deps.py fails on an include the layout table forbids and passes a clean tree."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "check-deps.py")

LAYOUT = """# Layout
## Allowed dependencies
| component | CMake target | may include |
|---|---|---|
| common | ec_common | — |
| store | ec_store | common, store/postgres (options) |
| store/postgres | ec_store_postgres | store, common |
| dispatch | ec_dispatch | common, store |
| config | ec_config | common, store (options), store/postgres (options) |
| app | ec_app | common, store, store/postgres, dispatch |
"""


class CheckDepsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.write("docs/layout.md", LAYOUT)
        self.write("src/common/status.h", "#pragma once\n")
        self.write("src/store/task_store.h", '#include "common/status.h"\n')
        self.write("src/store/postgres/pg.h", '#include "store/task_store.h"\n')
        self.write("src/dispatch/consumer.cc", '#include "store/task_store.h"\n#include "consumer.h"\n')
        self.write("src/app/main.cc", '#include "store/postgres/pg.h"\n#include "dispatch/x.h"\n')
        self.write("src/store/postgres/postgres_options.h", "#pragma once\n#include <string>\n")
        self.write("src/store/database_options.h", '#include "store/postgres/postgres_options.h"\n')
        self.write("src/config/config.h", '#include "store/database_options.h"\n')

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)

    def run_check(self):
        return subprocess.run([sys.executable, SCRIPT, self.root], capture_output=True, text=True)

    def test_clean_tree_passes(self):
        result = self.run_check()
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_upward_include_fails_naming_file_and_line(self):
        self.write("src/store/task_store.cc", '// x\n#include "dispatch/consumer.h"\n')
        result = self.run_check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/store/task_store.cc:2: store may not include dispatch", result.stdout)

    def test_backend_include_outside_app_fails(self):
        self.write("src/dispatch/lease.cc", '#include "store/postgres/pg.h"\n')
        result = self.run_check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("dispatch may not include store/postgres", result.stdout)

    def test_folder_missing_from_table_fails(self):
        self.write("src/rocketmq/client.cc", '#include "common/status.h"\n')
        result = self.run_check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/rocketmq/client.cc: its folder is not in the table", result.stdout)

    def test_an_options_only_entry_allows_no_seam(self):
        self.write("src/config/config.cc", '#include "config/config.h"\n#include "store/task_store.h"\n')
        result = self.run_check()
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/config/config.cc:2: config may include only the options headers of store",
                      result.stdout)

    def test_an_options_header_that_includes_code_fails(self):
        self.write("src/store/postgres/postgres_options.h", '#include <string>\n#include "common/status.h"\n')
        result = self.run_check()
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/store/postgres/postgres_options.h:2: an options header includes "common/status.h"',
                      result.stdout)

    def test_the_repository_itself_is_clean(self):
        result = subprocess.run([sys.executable, SCRIPT, REPO], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)


if __name__ == "__main__":
    unittest.main()
