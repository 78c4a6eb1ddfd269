"""What every cairn Lambda shares: the composition root and the one observability owner."""
