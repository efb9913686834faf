"""The target catalogs a process holds, by find-gen seed."""

from __future__ import annotations

import threading
from collections import OrderedDict

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.harness.sandbox.find_scripts import install_script_sandbox


class CatalogCache:
    """Catalogs by find-gen seed, least recently used first out beyond `max_seeds` (a catalog
    holds a generated find-gen set, ~20 MB; an API caller can name any seed)."""

    def __init__(self, max_seeds: int = 4) -> None:
        self.max_seeds = max_seeds
        self._by_seed: OrderedDict[int, Catalog] = OrderedDict()
        self._lock = threading.Lock()
        install_script_sandbox()  # FIND folder release checks run their scripts in bwrap

    def get(self, gen_seed: int = 0) -> Catalog:
        with self._lock:
            if gen_seed in self._by_seed:
                self._by_seed.move_to_end(gen_seed)
                return self._by_seed[gen_seed]
            catalog = self._by_seed[gen_seed] = Catalog(CatalogOptions(gen_seed=gen_seed))
            while len(self._by_seed) > self.max_seeds:
                self._by_seed.popitem(last=False)
            return catalog

    def seeds(self) -> list[int]:
        with self._lock:
            return list(self._by_seed)
