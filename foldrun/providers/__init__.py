"""Model providers: the preset table, the translator, the client and its refusal lines."""
