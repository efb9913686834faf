"""SAE latents as black-box targets: built SAEs (SAELens format), their catalogs, the runner."""
