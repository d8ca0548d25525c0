"""The experiment result cache that every chapter goes through.

A chapter wraps each expensive computation in :func:`~ssa_book.results.cache.cached`::

    result = cached(
        "icl_linear/train",                      # experiment name: a folder under results/<profile>/
        config,                                  # everything that determines the result
        lambda: train_and_evaluate(config),      # returns a JSON-able dict
        profile=profile,
        regenerate="python -m ssa_book book run --profile cpu --only icl_linear",
    )

:func:`~ssa_book.results.cache.cached_entry` takes the same arguments and returns the whole entry
(:class:`~ssa_book.results.store.StoredEntry`: config, result and a typed
:class:`~ssa_book.results.provenance.Provenance`); :func:`~ssa_book.results.store.read_entry` and
:func:`~ssa_book.results.store.entries_of` read stored entries. This package is the only reader and writer of the cache's files.

The entry is ``results/<profile>/<experiment>/<key[:16]>.json`` where ``key`` is the SHA-256
of the canonical JSON of ``config`` and :data:`~ssa_book.results.keys.CACHE_SCHEMA_VERSION`. An entry is reused only
when its stored config and schema version equal the requested ones exactly; anything else is
recomputed. With ``SSA_REQUIRE_CACHE=1`` (set by ``python -m ssa_book book run --require-cache``,
which CI uses) a missing entry raises :class:`~ssa_book.results.errors.CacheMissError` naming the command that creates
it, so that CI never starts a long training run by accident.

Put in ``config`` what changes the numbers (sizes, steps, seed, scorer, data); leave out the
device, so that a result computed on a GPU is reused on a CPU. The device goes into the
provenance instead (``device=``).

The key also holds the version of the code that computes the experiment
(:func:`ssa_book.code_versions.computation_of`), so that a change to that code cannot reuse the
numbers of the old code.

Without a checkout (the package installed with ``pip install git+...``, as on Colab) a missing
entry is first looked up in the committed cache of the commit the package was installed from
(pip records it in ``direct_url.json``), downloaded on demand into the local cache and checked
(its config, code version and file name must match what was asked); ``$SSA_RESULTS_MIRROR``
points that lookup at a folder or URL laid out like the repository instead.

Each concern is a module, and a caller imports each name from the module that owns it (this file
re-exports nothing):

* :mod:`~ssa_book.results.keys`: what identifies an entry: the canonical config, the key, the path;
* :mod:`~ssa_book.results.provenance`: what an entry records of how, where and when it was computed,
  and the questions asked of that record (the code state, the processor, the total compute time);
* :mod:`~ssa_book.results.store`: the entry files: read, checked, written atomically; whether one is there;
* :mod:`~ssa_book.results.mirror`: the committed cache, read on demand without a checkout;
* :mod:`~ssa_book.results.cache`: :func:`~ssa_book.results.cache.cached` and
  :func:`~ssa_book.results.cache.record_entry`, and whether a miss may compute;
* :mod:`~ssa_book.results.validate`: what ``python -m ssa_book results`` lists, validates and reformats;
* :mod:`~ssa_book.results.errors`: the two errors of the cache.
"""
