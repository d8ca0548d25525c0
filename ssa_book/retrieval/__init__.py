"""Max retrieval under set-size shift (Veličković et al., ICML 2025): a set of items, each with a
priority and a class; the model must name the class of the item with the highest priority. It is
trained on small sets and tested on sets up to 128 times larger, where softmax's attention
disperses. :mod:`ssa_book.retrieval.task` draws the sets, :mod:`ssa_book.retrieval.model` is the one-head
retriever, :mod:`ssa_book.retrieval.experiment` trains, evaluates and caches it for every scorer, and
:mod:`ssa_book.retrieval.analysis` reads and judges the runs."""
