"""Extraction: events -> triggers -> staged rollouts -> candidate records -> formation -> writes."""
