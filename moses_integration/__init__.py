"""The directory mert-moses.pl's ``--mertdir`` points at: executables named as Moses's
tuning programs, all copies of one shell script that runs
``python -m mtplug.integrations.moses <own name>`` (see README.md here).
``mtplug mertdir`` records the Python to use and prints this directory."""
