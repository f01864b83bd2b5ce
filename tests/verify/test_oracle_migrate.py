"""``oracle.engine_migrate_project``: the corpus oracle migrates with one project index over all
cases (as ``lightmigrate verify corpus/`` does), so cross-file rule effects are tested."""

import textwrap

from lightmigrate.verify import oracle

GAN = textwrap.dedent('''\
    import pytorch_lightning as pl
    import torch


    class GAN(pl.LightningModule):
        def training_step(self, batch, batch_idx, optimizer_idx):
            return batch.sum()

        def configure_optimizers(self):
            return [torch.optim.SGD(self.parameters(), lr=0.1), torch.optim.SGD(self.parameters(), lr=0.1)]
''')
SCRIPT = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accumulate_grad_batches=2)\n"


def test_project_migrate_sees_the_other_files(tmp_path):
    model, script = tmp_path / "model.py", tmp_path / "train.py"
    model.write_text(GAN)
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    oracle.migrate_cases([model, script], oracle.engine_migrate_project([model, script]), out)
    migrated = (out / "model.py").read_text()
    assert "should_step = (batch_idx + 1) % 2 == 0" in migrated  # the Trainer of train.py was read
    assert "TODO(lightmigrate): LM005" in (out / "train.py").read_text()
    # the per-file migrate knows nothing of train.py
    alone = oracle.engine_migrate()(GAN)
    assert "self.automatic_optimization = False" in alone and "should_step" not in alone
