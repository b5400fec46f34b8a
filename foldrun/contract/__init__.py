"""The file contract: parse, check and resolve desks. Pure Python, no Django.

The CLI (offline), deploy on the server and the run itself call these same
functions on the same files and print the same sentences.
"""
from .check import check, has_errors
from .desk import Desk, Document
from .findings import ContractError, Finding

__all__ = ["check", "has_errors", "Desk", "Document", "ContractError", "Finding"]
