"""Runtime verification: run 1.x code on real pytorch-lightning 1.9.5 and the migrated code on
Lightning 2.x, record what each run observably did, and compare the two records.

Module layout:

* ``recorder``  - in-process recording (metrics logger, epoch-end tracer, JSON encoding).
* ``runner``    - ``python -m lightmigrate.verify.runner``: runs case files in one interpreter.
* ``compare``   - pure-Python comparison of two result documents.
* ``hooks``     - stdlib-``ast`` helpers that read the 1.x epoch-end parameter names.
* ``oracle``    - drives the runner in other interpreters (subprocess) and migrates case copies.
* ``warm_server`` / ``warm`` - the warm worker (torch and Lightning imported once, a forked child
  per job) that ``verify`` runs its cases on, and reaching it.
* ``pytest_plugin`` - the pytest plugin that records every Trainer run of each test.
* ``pytest_mode`` - ``verify --pytest``: a project's own tests before and after migration.

``recorder`` and ``runner`` run inside the 1.9.5 interpreter, which has neither libcst nor click
nor rich: nothing in this package may import them at module level.
"""
