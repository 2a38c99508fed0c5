"""Word lists: the test model, built-in list sets, user list files and normalisation."""

from weatkit.lists.files import (
    CAWEAT_TESTS,
    CONCEPTS,
    language_of,
    load_list_file,
    parse_caweat_tsv,
    parse_list_bytes,
)
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.normalize import (
    Normalization,
    NormalizationReport,
    normalize_item,
    normalize_tests,
    normalize_tests_report,
)
from weatkit.lists.sources import (
    LIST_SETS,
    ListSelection,
    available_languages,
    load_list_set,
    select_lists,
)

__all__ = [
    "CAWEAT_TESTS",
    "CONCEPTS",
    "LIST_SETS",
    "SET_KEYS",
    "AssociationTest",
    "ListSelection",
    "Normalization",
    "NormalizationReport",
    "available_languages",
    "language_of",
    "load_list_file",
    "load_list_set",
    "normalize_item",
    "normalize_tests",
    "normalize_tests_report",
    "parse_caweat_tsv",
    "parse_list_bytes",
    "select_lists",
]
