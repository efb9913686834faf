"""Scoring FIND's entity and relation targets (function_store/entities_relations): the scorers
the records name are in `scorer.py`."""
