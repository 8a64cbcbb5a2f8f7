"""The console's views (one ``Screen`` each, CSS beside it) and their dialogs."""
