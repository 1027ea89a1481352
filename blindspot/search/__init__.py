"""Automatic search for blind spots (blind-spots paper, Appendix J), against any metric.

:func:`run_search` perturbs gold hypotheses greedily, one word at a time, keeping the edits the
targeted metric penalises least; a panel of other metrics judges the same texts, the edits are
classified into patterns (article swaps, number shifts, pronoun swaps...), and the top patterns
can become a rule-based perturbation (:func:`register_rules`) run through the rank protocol.
"""

from blindspot.search.job import SearchResult, SearchSettings, search_result
from blindspot.search.protocol import run_search
from blindspot.search.rules import PatternRules, register_patterns, register_rules, rules_from_results

__all__ = ["PatternRules", "SearchResult", "SearchSettings", "register_patterns", "register_rules",
           "rules_from_results", "run_search", "search_result"]
