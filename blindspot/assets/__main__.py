"""``python -m blindspot.assets`` (``make env`` runs it): the set-up step of ``blindspot
install-modules`` -- every offline asset in place, the metric modules registered with ``evaluate``
as ``blindspot/<name>`` (idempotent; canonical names are left alone) and the start-up file that
keeps evaluate quiet about their cached copies."""

from blindspot.cli.install_command import install_step

if __name__ == "__main__":
    install_step(print)
