"""One construct per capability; ``infra.stack.CairnStack`` composes them and owns the grants."""
