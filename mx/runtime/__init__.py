"""What compiled code needs at run time: the thread count (`threads.py`) and
the LLVM IR that runs a loop on OpenMP's threads (`parallel_for.py`)."""
