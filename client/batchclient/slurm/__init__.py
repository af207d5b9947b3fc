"""The Slurm commands (sbatch, squeue, scancel, scontrol, sacct, sinfo, srun, salloc),
a second front end on the same daemon and the same jobs as the PBS commands."""
