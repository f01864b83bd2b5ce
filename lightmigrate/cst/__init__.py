"""The libcst toolkit the rules build on: a walk that does not rebuild trees, cheap code generation and positions, matchers imported lazily, and editing helpers."""
