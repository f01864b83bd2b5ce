"""A small 1.x project whose script takes the Trainer's options only from its command line (issue 25)."""
