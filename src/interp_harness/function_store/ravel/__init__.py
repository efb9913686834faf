"""RAVEL (Huang et al., ACL 2024): data files, model-specific instances, attribute targets."""
