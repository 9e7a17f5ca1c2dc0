"""Print the OpenAPI document (the frontend's client is generated from it): python -m backend.openapi"""

import json
import sys

from backend.main import create_app

if __name__ == "__main__":
    json.dump(create_app().openapi(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
