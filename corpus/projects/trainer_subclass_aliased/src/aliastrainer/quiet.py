"""A subclass of the project's Trainer, imported under another name."""
from aliastrainer.base import BaseTrainer as Base


class QuietTrainer(Base):
    def __init__(self, batches=3, **kw):
        super().__init__(limit_train_batches=batches, amp_backend="native", **kw)
