"""The tool modules. Importing this package registers every fixed tool.

Each module registers its own tools at import; add a module's import here in the
commit that adds the module.
"""
