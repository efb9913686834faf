"""Scoring FIND's entity and relation targets (function_store/entities_relations): the judge's unit tests of
the agent's description, each family with FIND's own prompt."""

from __future__ import annotations

from interp_harness.evaluator.unit_tests import (
    PAIRS_TEMPLATE,
    SELECTIVITY_TEMPLATE,
    JudgeScorer,
    UnitTestPrompt,
)

ENTITIES_PROMPT = UnitTestPrompt("entities", SELECTIVITY_TEMPLATE)
RELATIONS_PROMPT = UnitTestPrompt("relations", PAIRS_TEMPLATE)

ENTITIES = JudgeScorer(ENTITIES_PROMPT)
RELATIONS = JudgeScorer(RELATIONS_PROMPT)
