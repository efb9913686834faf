"""The correctness rules of RAVEL's instance filter (SAEBench's port), case by case."""

from __future__ import annotations

import pytest

from interp_harness.function_store.ravel.matching import extract_label, is_correct


@pytest.mark.parametrize(
    "output,gold,attr,prompt,want",
    [
        (" France, known", "France", "Country", "", True),
        (" Fr", "France", "Country", "", True),  # output shorter: gold starts with it
        (" Germany", "France", "Country", "", False),
        ('Canada"}, {"', "Canada", "Country", "", True),  # text before the first quote
        (" England", "United Kingdom", "Country", "", True),
        (" Korea", "South Korea", "Country", "", True),
        (" America", "North America", "Continent", "", True),
        (" NA", "North America", "Continent", "", True),
        (" Chinese", "Mandarin", "Language", "", True),
        (" Spanish", "English, Spanish", "Language", "", True),
        ("51.5", "49", "Latitude", "", True),  # |51 - 49| <= 2
        ("52", "49", "Latitude", "", False),
        ("-121", "-123", "Longitude", "", True),
        ("Europe\\/Paris", "Europe/Paris", "Timezone", "", True),
        ("UTC+1", "Europe/Paris", "Timezone", "time zone UTC", True),
        ("UTC+3", "Europe/Paris", "Timezone", "time zone UTC", False),
        ("", "France", "Country", "", False),
    ],
)
def test_is_correct(output, gold, attr, prompt, want):
    assert is_correct(output, gold, attr, prompt) is want


def test_extract_label_cuts_at_punctuation_keeping_the_space():
    assert extract_label(" Japan, located") == " Japan"
    assert extract_label('Canada"}, {"') == "Canada"
    assert extract_label(" North America\n") == " North America"
