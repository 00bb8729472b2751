"""click settings every `vcctl` command shares."""

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
