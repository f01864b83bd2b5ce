"""What a run reports and how: findings, the console report, JSON and SARIF, the progress bar."""
