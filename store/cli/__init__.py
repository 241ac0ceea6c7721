"""What people and programs type: the ``baton`` CLI, the ``/baton:`` prompt commands, and the
actions both share. The top layer of ``store``: it may import every other part.
"""
