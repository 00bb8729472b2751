"""Volcano's CronJob controller: schedule.py (pure decisions), controller.py (the component)."""
