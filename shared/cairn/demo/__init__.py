"""The offline demos the ``cairn`` command runs, each across separate processes on the embedded
store (``cairn.local``), never on the user's own store by default.

- ``cairn demo``: ``conversation_demo`` (the processes: converse with extraction, recall, replay)
  over ``conversation_script`` (the scripted conversation, the questions, and a rule-based
  filing agent kept beside them);
- ``cairn demo-agent``: ``agent_demo`` (the processes: an agent loop that learns, recalls and
  edits a lesson) over ``agent_script`` (the runs and the scripted model's replies);
- ``processes``: what both share, a child ``python -m cairn`` step under a ruled heading.
"""
