"""Extensions that Nova loads from iothrottle through its entry points.

Nova is not a dependency of iothrottle: every module here imports Nova
only inside the functions Nova calls.
"""
