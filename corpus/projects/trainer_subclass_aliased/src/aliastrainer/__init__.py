"""A small 1.x project that imports Lightning's classes under aliases (issue 25, kind 1)."""
