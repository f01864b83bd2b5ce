"""The migration engine: finds files, runs rules over them, writes or reports the results.

Public API:

- ``transform_text(text, rules, path="<string>", project=None) -> TransformResult``: the pure
  core (no file access) for tests and tools; raises SourceSyntaxError, RuleCrash or
  InvalidOutput (all ``EngineError``).
- ``run(paths, rules, mode=Mode.WRITE) -> RunReport``: a whole run over files and folders.
- ``discover(paths)``, ``read_source(path)``, ``process_source(source, rules, project, mode)``:
  the steps ``run`` is made of.
- ``run_bytes(data, path, rules, mode)``: a run over one file's bytes (``rewrite -``).
"""

from lightmigrate.engine.discovery import Entry, discover
from lightmigrate.engine.markers import Marker, find_markers
from lightmigrate.engine.model import EngineError, FileResult, Mode, Problem, RunReport
from lightmigrate.engine.run import process_source, run, run_bytes, unified_diff
from lightmigrate.engine.source import (
    Source,
    decode_source,
    encode_source,
    read_source,
    write_atomic,
)
from lightmigrate.engine.transform import (
    InvalidOutput,
    RuleCrash,
    SourceSyntaxError,
    TransformResult,
    needs_transform,
    parse_source,
    transform_text,
)

__all__ = [
    "EngineError",
    "Entry",
    "FileResult",
    "InvalidOutput",
    "Marker",
    "Mode",
    "Problem",
    "RuleCrash",
    "RunReport",
    "Source",
    "SourceSyntaxError",
    "TransformResult",
    "decode_source",
    "discover",
    "encode_source",
    "find_markers",
    "needs_transform",
    "parse_source",
    "process_source",
    "read_source",
    "run",
    "run_bytes",
    "transform_text",
    "unified_diff",
    "write_atomic",
]
