"""Lightning 2.x's own sources, migrated with every rule, stay as they are.

Code that already targets 2.x (a half-migrated project, or a file someone ported by hand) must
not be marked as using removed 1.x APIs: every such marker would be a false alarm, and some
would give wrong advice (telling a strategy to rename ``setup_environment``, which 2.x still
calls). The installed Lightning 2.6.6 is the largest body of 2.x code at hand. A handful of its
files do change, each for a reason reviewed here; any other change or finding fails the test.
"""

from pathlib import Path

import lightning
import pytest

from lightmigrate.engine.model import Mode
from lightmigrate.engine.run import run
from lightmigrate.rules import select_rules

PACKAGE = Path(lightning.__file__).parent

# file (relative to the package) -> (rule codes that change it or report in it, why that is right)
REVIEWED = {
    "pytorch/callbacks/batch_size_finder.py": (
        {"LM307"}, "BatchSizeFinder calls scale_batch_size, whose binsearch margin changed in 2.6 (C13): "
                   "a 1.x subclass needs that marker"),
    "pytorch/callbacks/spike.py": (
        {"LM001"}, "SpikeDetection.on_train_batch_end tells a Mapping from other outputs: after a step that "
                   "returned None 1.9 handed it [] (B4.3), which the guard gives back (its TypeError instead of "
                   "2.x's KeyError); the tool cannot tell 2.x-native code from 1.x code"),
    "pytorch/core/hooks.py": (
        {"LM201"}, "`pl.utilities.move_data_to_device` is rewritten to its Fabric home (R4), the same function"),
    "pytorch/demos/boring_classes.py": (
        {"LM004"}, "a manual-optimization step without a closure gets the LBFGS-safe closure, which runs once "
                   "for any other optimizer"),
}
# notes (behaviour changes of 2.x a 1.x user should know about) are not changes; these files get some
NOTES_ONLY = {"LM309"}


@pytest.fixture(scope="module")
def report():
    return run([str(PACKAGE / "pytorch"), str(PACKAGE / "fabric")], select_rules(), Mode.CHECK, jobs=2)


def test_the_sources_are_there(report):
    assert report.scanned > 250
    assert report.failed == 0


def test_no_removed_api_marker_on_2x_code(report):
    removals = [f.format() for r in report.files for f in r.findings if f.code in {"LM202", "LM090"}]
    assert removals == []


def test_only_the_reviewed_files_change_and_for_the_reviewed_rules(report):
    seen = {}
    for result in report.files:
        codes = {f.code for f in result.findings + result.changes} - NOTES_ONLY
        if result.changed or codes:
            seen[Path(result.path).relative_to(PACKAGE).as_posix()] = codes
    assert seen == {path: codes for path, (codes, _) in REVIEWED.items()}
