"""Implementation of ``torchferro.compiler.precompile`` (the public names live there).

``_runtime``: what a written artifact imports (errors, guard failure texts, name resolution);
``_writer``: turns exported compiled entries into the artifact's Python source and the cache;
``_cache``: the manifest, hashing and the environment checks shared by writer and loader.
"""
