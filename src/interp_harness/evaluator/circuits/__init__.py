"""The evaluator side of the circuits family: node scores, faithfulness, closure, the code."""
