"""Authorization matrix: every operation of the OpenAPI × every kind of caller, expected status.

The operations come from the app's own OpenAPI, so a new route shows up here by itself and fails
until someone adds its row to EXPECTED below, deciding who may call it. Path parameters are ids of
team A's objects (tests/security/world.py); bodies are minimal valid bodies, so a 422 can not hide
an authorization answer. Each request runs in a savepoint rolled back afterwards: every caller meets
the same world. Callers outside team A must never read team A's data, whatever the status.

Reading a row: columns are the callers in world.PRINCIPALS order. "2xx" = any success; a number =
exactly that status; "403|404" = either.
"""

import json
import uuid
from typing import Any

import pytest

from backend.main import create_app
from tests.security.conftest import Matrix
from tests.security.world import JOB, PASSWORD, PRINCIPALS, World

# one worker runs the whole module, so the world is built once
pytestmark = pytest.mark.xdist_group("security-matrix")

OK = "2xx"
# one fio terse v3 line (the field list of fio's HOWTO, "Terse output"): 4 MiB read in 100 ms
MATRIX_TERSE = (
    "3;fio-3.33;matrix;0;0;4096;40960;10240;100;0;0;0;0;1;50;9.5;2.0;"
    + ";".join(["99.000000%=20"] * 20)
    + ";2;60;10.0;2.1;40000;42000;100.000000%;40960;100;"
    + ";".join(["0"] * 12 + ["0%=0"] * 20 + ["0"] * 9)
    + ";1.0;5.0;100;0;10;100.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;"
    + ";".join(["0.00%"] * 22)
)

# fmt: off
# Who may do what. Columns:
#      anonymous viewer member admin  user_b agent_x agent_y agent_revoked
#   (viewer/member/admin are of team A; user_b is admin of team B only; agents X, Y and the revoked
#    one belong to team A)
EXPECTED: dict[str, tuple[str, ...]] = {
    "GET /api/v1/health":                         (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "GET /api/v1/health/live":                    (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    # login ignores any bearer token: the body's credentials decide
    "POST /api/v1/auth/login":                    (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    # logout ends a browser session; the principals hold personal API tokens, which it refuses (409)
    "POST /api/v1/auth/logout":                   ("401", "409", "409", "409", "409", "403", "403", "401"),
    "GET /api/v1/auth/me":                        ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "POST /api/v1/auth/tokens":                   ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/auth/tokens":                    ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    # --- V5 sign-in with OpenID Connect (issue 13): the matrix's server has no provider configured,
    # so whether it is offered answers everyone and the flow's routes are 404 oidc_not_configured
    # for every caller (tests/backend/test_oidc.py runs the configured flow against a real provider)
    "GET /api/v1/auth/oidc":                      (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "GET /api/v1/auth/oidc/login":                ("404",) * 8,
    "GET /api/v1/auth/oidc/callback":             ("404",) * 8,
    "POST /api/v1/auth/oidc/session":             ("404",) * 8,
    # --- issue 22, who owns an e-mail (S1): the world's server sends no mail and its users proved
    # their addresses; tokens in bodies are unknown ones (tests/backend/test_account_proof.py uses
    # real ones: reused, expired, voided, another account's) ---
    "POST /api/v1/auth/oidc/link":                ("404",) * 8,
    "POST /api/v1/auth/email-verification":       ("401", "409", "409", "409", "409", "403", "403", "401"),
    "POST /api/v1/auth/email-verification/confirm":
                                                  ("401", "410", "410", "410", "410", "403", "403", "401"),
    # no login: the same answer for every caller and every address (404: this server sends no mail)
    "POST /api/v1/auth/password-reset":           ("404",) * 8,
    "POST /api/v1/auth/password-reset/confirm":   ("410",) * 8,
    # instance administrators only (none in the world): a team admin is no one's account keeper
    "GET /api/v1/admin/users":                    ("401", "403", "403", "403", "403", "403", "403", "401"),
    "POST /api/v1/admin/users/{user_id}/reset-link":
                                                  ("401", "403", "403", "403", "403", "403", "403", "401"),
    # the member's own personal token: nobody else may see or end it, not even the team's admin
    "DELETE /api/v1/auth/tokens/{token_id}":      ("401", "404", OK, "404", "404", "403", "403", "401"),
    # issue 30: one's own password and e-mail, with the current password (every user has PASSWORD)
    "POST /api/v1/auth/password":                 ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "POST /api/v1/auth/email":                    ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/teams":                          ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    # the audit log: team A's admins only (user_b is admin of team B: 403 on team A)
    "GET /api/v1/teams/{team_id}/audit":          ("401", "403", "403", OK, "403", "403", "403", "401"),
    "GET /api/v1/agents":                         ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/agents/{agent_id}":              ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # admins only; user_b is admin of team B and lists B's tokens (none of A's: the leak check)
    "GET /api/v1/agents/enrollment-tokens":       ("401", "403", "403", OK, OK, "403", "403", "401"),
    # the agent for other hosts: anonymous (a host being installed holds only its enrolment token,
    # which it spends on enrolling); nothing served is secret. The world's server has no bundles,
    # so a bundle is 404 for everyone (tests/agent_dist/ serves real ones)
    "GET /api/v1/agent-dist":                     (OK,) * 8,
    "GET /api/v1/agent-dist/install.sh":          (OK,) * 8,
    "GET /api/v1/agent-dist/ca.pem":              ("404",) * 8,
    "GET /api/v1/agent-dist/files/{file_name}":   ("404",) * 8,
    "DELETE /api/v1/agents/enrollment-tokens/{token_id}":
                                                  ("401", "403", "403", OK, "404", "403", "403", "401"),
    "POST /api/v1/agents/enrollment-tokens":      ("401", "403", "403", OK, "403", "403", "403", "401"),
    # enrolment authenticates with the enrolment token in the body, not a bearer token
    "POST /api/v1/agents/enroll":                 (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "DELETE /api/v1/agents/{agent_id}":           ("401", "403", "403", OK, "404", "403", "403", "401"),
    "POST /api/v1/agents/{agent_id}/revoke":      ("401", "403", "403", OK, "404", "403", "403", "401"),
    "POST /api/v1/agents/{agent_id}/heartbeat":   ("401", "403", "403", "403", "403", OK, "403", "401"),
    "PUT /api/v1/agents/{agent_id}/inventory":    ("401", "403", "403", "403", "403", OK, "403", "401"),
    "POST /api/v1/agents/{agent_id}/lease":       ("401", "403", "403", "403", "403", OK, "403", "401"),
    # an agent rotates only its own token; a revoked one cannot (docs/adr/0011)
    "POST /api/v1/agents/{agent_id}/token":       ("401", "403", "403", "403", "403", OK, "403", "401"),
    "GET /api/v1/devices":                        ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "PATCH /api/v1/devices/{device_id}":          ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/environments":                   ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "POST /api/v1/environments":                  ("401", "403", OK, OK, "403", "403", "403", "401"),
    "PATCH /api/v1/environments/{environment_id}": ("401", "403", OK, OK, "404", "403", "403", "401"),
    "PUT /api/v1/environments/{environment_id}/grid-intensity":
                                                  ("401", "403", OK, OK, "404", "403", "403", "401"),
    # issue 27 part 3: the topology an agent's inventory suggests (read-only; team A's agents) and a
    # run's recorded environment: the team reads both, strangers get 404
    "GET /api/v1/environments/{environment_id}/topology-suggestion":
                                                  ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/runs/{run_id}/environment":      ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/workloads":                      ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "POST /api/v1/workloads":                     ("401", "403", OK, OK, "403", "403", "403", "401"),
    "GET /api/v1/workloads/{workload_id}":        ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # the engine's facts of a spec in the body: nothing stored or read, any signed-in user (no team)
    "POST /api/v1/workloads/facts":               ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    # the engine's parse of a fio job file in the body (ADR 0029): nothing stored or read, any user
    "POST /api/v1/workloads/jobfile":             ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    # a team-B user naming team A's agent in the body: 422 on agent_id ("no such agent in your teams")
    "POST /api/v1/runs":                          ("401", "403", OK, OK, "422", "403", "403", "401"),
    "GET /api/v1/runs":                           ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/runs/{run_id}":                  ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "POST /api/v1/runs/{run_id}/cancel":          ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/runs/{run_id}/result":           ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PUT /api/v1/runs/{run_id}/result":           ("401", "403", "403", "403", "403", OK, "404", "401"),
    "GET /api/v1/runs/{run_id}/power":            ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/runs/{run_id}/series":           ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/runs/{run_id}/system":           ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # an open page's poll of an active run (its status, its latest report): the team reads it
    "GET /api/v1/runs/{run_id}/progress":         ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # a SNIA PTS run's report: the world's run is no PTS run, so its team's roles get 404 no_pts_result
    # (tests/backend/test_pts.py reads a real one); another team's user the run's own 404
    "GET /api/v1/runs/{run_id}/pts":              ("401", "404", "404", "404", "404", "403", "403", "401"),
    # the assigned run belongs to agent Y: here X is the foreign agent
    "POST /api/v1/runs/{run_id}/start":           ("401", "403", "403", "403", "403", "404", OK, "401"),
    "POST /api/v1/runs/{run_id}/progress":        ("401", "403", "403", "403", "403", OK, "404", "401"),
    "POST /api/v1/runs/{run_id}/failure":         ("401", "403", "403", "403", "403", OK, "404", "401"),
    # group runs: queued by members naming their team's agents (team B's user names team A's: 422
    # on members.0.agent_id); the start barrier is its member agent's: the running run is no
    # group's member, so its own agent gets 409 not_in_group, the other agent 404
    "POST /api/v1/run-groups":                    ("401", "403", OK, OK, "422", "403", "403", "401"),
    "GET /api/v1/run-groups/{group_id}":          ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "POST /api/v1/run-groups/{group_id}/cancel":  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "POST /api/v1/runs/{run_id}/ready":           ("401", "403", "403", "403", "403", "409", "404", "401"),
    "POST /api/v1/runs/{run_id}/started":         ("401", "403", "403", "403", "403", "409", "404", "401"),
    # runs named in the query that are not in the caller's teams: 422 on `runs`
    "GET /api/v1/compare":                        ("401", OK, OK, OK,  "422", "403", "403", "401"),
    "GET /api/v1/compare/latency":                ("401", OK, OK, OK,  "422", "403", "403", "401"),
    # named views (backend/views): the catalogue answers any user; asked about runs, only their team.
    # The table of the world's run (a custom workload, no preset) is a 422 for every caller: the views
    # show preset runs; test_views checks a stranger's run is refused and nothing of it leaks
    "GET /api/v1/views":                          ("401", OK, OK, OK,  "422", "403", "403", "401"),
    "GET /api/v1/views/table":                    ("401", "422", "422", "422", "422", "403", "403", "401"),
    "GET /api/v1/carbon/grid-intensities":        ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/carbon/embodied-defaults":       ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "POST /api/v1/campaigns":                     ("401", "403", OK, OK, "422", "403", "403", "401"),
    # what a campaign body would queue (its matrix expanded, on team A's target set: every target
    # its agents list now), queueing nothing: whoever can see its workloads and is in the set's team;
    # user_b naming team A's workload: 422 workload_id not found (and target_set.team_id after it)
    "POST /api/v1/campaigns/plan":                ("401", OK, OK, OK,  "422", "403", "403", "401"),
    "GET /api/v1/campaigns":                      ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/campaigns/{campaign_id}":        ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # --- V2 share links (issue 13): members of the target's team create them (a team-B user naming
    # team A's run: 422 on target); members list them; the creator (the world's member) or an admin
    # revokes; the link's token is the credential of /shared/{token} (any bearer token is ignored)
    "POST /api/v1/share-links":                   ("401", "403", OK, OK, "422", "403", "403", "401"),
    "GET /api/v1/share-links":                    ("401", "403", OK, OK, "403", "403", "403", "401"),
    "DELETE /api/v1/share-links/{share_link_id}": ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/shared/{token}":                 (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "GET /api/v1/shared/{token}/export.csv":      (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "GET /api/v1/shared/{token}/export.json":     (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    # --- V1 people and teams (issue 13) ---
    # only instance administrators create teams (IOWATT_TEAM_CREATORS' default, issue 22; none of
    # the world's users is one: tests/backend/test_account_proof.py has one create); a team's
    # members read it, its admins rename it
    "POST /api/v1/teams":                         ("401", "403", "403", "403", "403", "403", "403", "401"),
    "GET /api/v1/teams/{team_id}":                ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PATCH /api/v1/teams/{team_id}":              ("401", "403", "403", OK, "404", "403", "403", "401"),
    "GET /api/v1/teams/{team_id}/members":        ("401", OK, OK, OK,  "404", "403", "403", "401"),
    # the member's own row: an admin changes its role; the member may remove themselves (leave)
    "PATCH /api/v1/teams/{team_id}/members/{user_id}":
                                                  ("401", "403", "403", OK, "404", "403", "403", "401"),
    "DELETE /api/v1/teams/{team_id}/members/{user_id}":
                                                  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "POST /api/v1/teams/{team_id}/invitations":   ("401", "403", "403", OK, "403", "403", "403", "401"),
    "GET /api/v1/teams/{team_id}/invitations":    ("401", "403", "403", OK, "403", "403", "403", "401"),
    "DELETE /api/v1/teams/{team_id}/invitations/{invitation_id}":
                                                  ("401", "403", "403", OK, "403", "403", "403", "401"),
    # the link's token is the credential: any bearer token is ignored (the invited e-mail has no
    # account yet; for an existing account the request needs that account's token: test_invitations)
    "GET /api/v1/invitations/{token}":            (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    "POST /api/v1/invitations/{token}/accept":    (OK,  OK,  OK,  OK,  OK,  OK,  OK,  OK),
    # --- V4 deletion, export, comments (issue 13; ADR 0021): admins delete anything in the team,
    # members what they created (the world's runs and campaign are the member's), viewers nothing.
    # The world's device carries runs (409 without force, and with it: a running run holds it); the
    # environment is deleted with force=true (its runs are detached); team A's deletion is a 409
    # while its runs run; its admin is its last admin (409), user_b the only member of team B (409)
    "DELETE /api/v1/runs/{run_id}":               ("401", "403", OK, OK, "404", "403", "403", "401"),
    "DELETE /api/v1/devices/{device_id}":         ("401", "403", "403", "409", "404", "403", "403", "401"),
    "DELETE /api/v1/environments/{environment_id}": ("401", "403", "403", OK, "404", "403", "403", "401"),
    "DELETE /api/v1/workloads/{workload_id}":     ("401", "403", "403", OK, "404", "403", "403", "401"),
    "DELETE /api/v1/campaigns/{campaign_id}":     ("401", "403", OK, OK, "404", "403", "403", "401"),
    # schedules: the team reads them and their slots, members create them; the world's schedule is
    # the member's: they or an admin change or delete it. user_b creating one on team A's agent: 422
    # naming campaign.targets.0.agent_id (the campaign's own check), as for campaigns
    "POST /api/v1/schedules":                     ("401", "403", OK, OK, "422", "403", "403", "401"),
    "GET /api/v1/schedules":                      ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/schedules/{schedule_id}":        ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/schedules/{schedule_id}/slots":  ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PATCH /api/v1/schedules/{schedule_id}":      ("401", "403", OK, OK, "404", "403", "403", "401"),
    "DELETE /api/v1/schedules/{schedule_id}":     ("401", "403", OK, OK, "404", "403", "403", "401"),
    # alerts: the team reads its alerts and channels (URLs without their secrets); admins manage
    # channels (user_b naming team A in a body: 403; team A's channel by id: 404)
    "POST /api/v1/alert-channels":                ("401", "403", "403", OK, "403", "403", "403", "401"),
    "GET /api/v1/alert-channels":                 ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "PATCH /api/v1/alert-channels/{channel_id}":  ("401", "403", "403", OK, "404", "403", "403", "401"),
    "DELETE /api/v1/alert-channels/{channel_id}": ("401", "403", "403", OK, "404", "403", "403", "401"),
    "POST /api/v1/alert-channels/{channel_id}/test": ("401", "403", "403", OK, "404", "403", "403", "401"),
    # series: the team reads them, their history, changes and verdicts; members name, pin, archive
    # them and review changes; team thresholds: admins (user_b naming team A: 403)
    "GET /api/v1/series":                         ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    # a run's series made (or found) by a member; another team's run: 404
    "POST /api/v1/series":                        ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/series/thresholds":              ("401", OK, OK, OK,  "403", "403", "403", "401"),
    "PUT /api/v1/series/thresholds":              ("401", "403", "403", OK, "403", "403", "403", "401"),
    "GET /api/v1/series/{series_id}":             ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PATCH /api/v1/series/{series_id}":           ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/series/{series_id}/history":     ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/series/{series_id}/detections":  ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PATCH /api/v1/series/{series_id}/detections/{detection_id}":
                                                  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/series/{series_id}/verdict":     ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "GET /api/v1/alerts":                         ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "DELETE /api/v1/teams/{team_id}":             ("401", "403", "403", "409", "404", "403", "403", "401"),
    "DELETE /api/v1/auth/me":                     ("401", OK, OK, "409", "409", "403", "403", "401"),
    "POST /api/v1/teams/{team_id}/export":        ("401", "403", "403", OK, "404", "403", "403", "401"),
    # comments: the team reads, members write; the member wrote the world's comment: only they edit
    # it, they or an admin delete it
    "GET /api/v1/comments":                       ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "POST /api/v1/comments":                      ("401", "403", OK, OK, "404", "403", "403", "401"),
    "PATCH /api/v1/comments/{comment_id}":        ("401", "403", OK, "403", "404", "403", "403", "401"),
    "DELETE /api/v1/comments/{comment_id}":       ("401", "403", OK, OK, "404", "403", "403", "401"),
    # --- V3 runs list, tags, uploads (issue 13; ADR 0020): the team reads its tags (user_b naming
    # team A: 403), members tag runs; a member's or admin's token (write or upload scope) uploads a
    # result to team A, a viewer's and team B's admin's are 403 naming the role
    "PUT /api/v1/runs/{run_id}/tags":             ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/tags":                           ("401", OK, OK, OK,  "403", "403", "403", "401"),
    "POST /api/v1/results":                       ("401", "403", OK, OK, "403", "403", "403", "401"),
    # --- imports (issue 26): members import files and published figures into their team (a viewer's
    # and team B's admin's are 403 naming the role); the world's runs were measured, not imported:
    # their source is 404 no_source for the team, 404 for strangers
    "POST /api/v1/imports":                       ("401", "403", OK, OK, "403", "403", "403", "401"),
    "POST /api/v1/imports/published":             ("401", "403", OK, OK, "403", "403", "403", "401"),
    # the formats the importers read (the CLI's --list-formats, the Import page): any signed-in user
    "GET /api/v1/imports/formats":                ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/runs/{run_id}/source":           ("401", "404", "404", "404", "404", "403", "403", "401"),
    # --- procurement reviews (issue 16; ADR 0024): the team reads (the PDF too), members edit,
    # comment and start new versions, admins decide; the world's review is the member's, undecided
    "POST /api/v1/reviews":                       ("401", "403", OK, OK, "403", "403", "403", "401"),
    "GET /api/v1/reviews":                        ("401", OK, OK, OK,  OK,  "403", "403", "401"),
    "GET /api/v1/reviews/{review_id}":            ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "PATCH /api/v1/reviews/{review_id}":          ("401", "403", OK, OK, "404", "403", "403", "401"),
    "POST /api/v1/reviews/{review_id}/candidates": ("401", "403", OK, OK, "404", "403", "403", "401"),
    "PATCH /api/v1/reviews/{review_id}/candidates/{candidate_id}":
                                                  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "DELETE /api/v1/reviews/{review_id}/candidates/{candidate_id}":
                                                  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "POST /api/v1/reviews/{review_id}/decision":  ("401", "403", "403", OK, "404", "403", "403", "401"),
    "POST /api/v1/reviews/{review_id}/versions":  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/reviews/{review_id}/comments":   ("401", OK, OK, OK,  "404", "403", "403", "401"),
    "POST /api/v1/reviews/{review_id}/comments":  ("401", "403", OK, OK, "404", "403", "403", "401"),
    "GET /api/v1/reviews/{review_id}/pdf":        ("401", OK, OK, OK,  "404", "403", "403", "401"),
}
# fmt: on

# Path parameters: which of team A's objects each names (world.ids keys). Per operation where the
# object's state matters (an agent's protocol needs a run in the right state, with its lease).
PATH_IDS: dict[str, str] = {
    "comment_id": "comment",  # V4
    "review_id": "review",  # issue 16
    "candidate_id": "review_candidate",
    "team_id": "team",
    "agent_id": "agent_x",
    "device_id": "device",
    "environment_id": "environment",
    "workload_id": "workload",
    "run_id": "run_done",
    "campaign_id": "campaign",
    "schedule_id": "schedule",
    "series_id": "series",
    "detection_id": "series_detection",
    "channel_id": "alert_channel",
    "group_id": "run_group",
    "token_id": "member_token",
    "enrollment_token_id": "enrollment_token",
    "file_name": "run_done",  # any name: none is a bundle on the world's server
    "share_link_id": "share_link",  # V2
    "user_id": "member_user",
    "invitation_id": "invitation",
    "token": "invitation_token",
}
PATH_IDS_BY_OP: dict[str, dict[str, str]] = {
    "POST /api/v1/runs/{run_id}/cancel": {"run_id": "run_running"},
    "PUT /api/v1/runs/{run_id}/result": {"run_id": "run_running"},
    "POST /api/v1/runs/{run_id}/progress": {"run_id": "run_running"},
    "POST /api/v1/runs/{run_id}/failure": {"run_id": "run_running"},
    "POST /api/v1/runs/{run_id}/start": {"run_id": "run_assigned"},
    "POST /api/v1/runs/{run_id}/ready": {"run_id": "run_running"},
    "POST /api/v1/runs/{run_id}/started": {"run_id": "run_running"},
    "DELETE /api/v1/agents/enrollment-tokens/{token_id}": {"token_id": "enrollment_token"},
    # V2: a share link's token
    "GET /api/v1/shared/{token}": {"token": "share_token"},
    "GET /api/v1/shared/{token}/export.csv": {"token": "share_token"},
    "GET /api/v1/shared/{token}/export.json": {"token": "share_token"},
}


def _upload(w: World) -> dict[str, Any]:
    from tests.factories import engine_document

    return {
        "lease_id": w.leases["run_running"],
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(),
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:30Z",
    }


# Minimal valid bodies (JSON unless a (content, media type) pair) and required query parameters.
BODIES: dict[str, Any] = {
    # procurement reviews (issue 16)
    "POST /api/v1/reviews": lambda w: {
        "team_id": str(w.team_a),
        "name": "matrix review",
        "currency": "EUR",
        "horizon_years": "3",
        "tariff_per_kwh": "0.2",
    },
    "PATCH /api/v1/reviews/{review_id}": lambda w: {"question": "matrix"},
    "POST /api/v1/reviews/{review_id}/candidates": lambda w: {
        "name": "matrix candidate",
        "device": {"model": "disk", "capacity_bytes": 10**12, "unit_price": "50"},
        "count": 1,
        "protection": "jbod",
        "performance": {"source": "published", "metric": "iops", "value": "100", "reference": "datasheet"},
    },
    "PATCH /api/v1/reviews/{review_id}/candidates/{candidate_id}": lambda w: {"count": 4},
    "POST /api/v1/reviews/{review_id}/decision": lambda w: {
        "candidate_id": w.ids["review_candidate"],
        "reason": "matrix",
    },
    "POST /api/v1/reviews/{review_id}/comments": lambda w: {"body": "matrix"},
    # V3 tags and uploads (issue 13)
    "PUT /api/v1/runs/{run_id}/tags": lambda w: {"tags": ["matrix"]},
    "POST /api/v1/results": lambda w: {
        "team_id": str(w.team_a),
        "upload_id": str(uuid.uuid4()),
        "host": "ci-matrix",
        "device": {"model": "matrix disk"},
        "name": "matrix upload",
        "engine_result": _upload(w)["engine_result"],
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:30Z",
    },
    # imports (issue 26): pasted fio terse text; a datasheet's figure
    "POST /api/v1/imports": lambda w: {
        "team_id": str(w.team_a),
        "text": MATRIX_TERSE,
        "file_name": "matrix.terse",
        "host": "matrix-host",
        "device": "matrix disk",
    },
    "POST /api/v1/imports/published": lambda w: {
        "team_id": str(w.team_a),
        "vendor": "Acme",
        "model": "X1 2TB",
        "reference": "datasheet rev 1, p. 3",
        "figures": [{"test": "SEQ1M Q8T1 read", "value": 7000, "unit": "MB/s"}],
    },
    # V4 deletion and comments (issue 13)
    "DELETE /api/v1/teams/{team_id}": lambda w: {"confirm_name": f"team-{w.marker}"},
    "DELETE /api/v1/auth/me": lambda w: {"password": PASSWORD},
    "POST /api/v1/comments": lambda w: {
        "target_kind": "run",
        "target_key": w.ids["run_done"],
        "body": "matrix",
    },
    "PATCH /api/v1/comments/{comment_id}": lambda w: {"body": "matrix edit"},
    "POST /api/v1/auth/login": lambda w: {"email": w.email["member"], "password": PASSWORD},
    "POST /api/v1/auth/tokens": lambda w: {"name": "matrix"},
    "POST /api/v1/auth/password": lambda w: {"current_password": PASSWORD, "new_password": "matrix new pw"},
    "POST /api/v1/auth/email": lambda w: {"current_password": PASSWORD, "email": "new-address@example.test"},
    "POST /api/v1/share-links": lambda w: {"kind": "run", "target": w.ids["run_done"]},  # V2
    "POST /api/v1/auth/oidc/session": lambda w: {"code": "matrix-one-time-code"},  # V5
    # issue 22 (S1)
    "POST /api/v1/auth/oidc/link": lambda w: {"code": "matrix-one-time-code", "password": PASSWORD},
    "POST /api/v1/auth/email-verification/confirm": lambda w: {"token": "iwp_matrix-unknown-token"},
    "POST /api/v1/auth/password-reset": lambda w: {"email": w.email["member"]},
    "POST /api/v1/auth/password-reset/confirm": lambda w: {
        "token": "iwp_matrix-unknown-token",
        "password": PASSWORD,
    },
    # V1 people and teams (issue 13); no marker in the new names: user_b reads them back
    "POST /api/v1/teams": lambda w: {"name": "matrix new team"},
    "PATCH /api/v1/teams/{team_id}": lambda w: {"name": "matrix renamed team"},
    "PATCH /api/v1/teams/{team_id}/members/{user_id}": lambda w: {"role": "viewer"},
    "POST /api/v1/teams/{team_id}/invitations": lambda w: {"email": "new@example.test", "role": "member"},
    "POST /api/v1/invitations/{token}/accept": lambda w: {"display_name": "Invitee", "password": PASSWORD},
    "POST /api/v1/agents/enrollment-tokens": lambda w: {"team_id": str(w.team_a)},
    "POST /api/v1/agents/enroll": lambda w: {
        "enrollment_token": w.raw["enrollment_token"],
        "name": f"new-{w.marker}",
        "hostname": "host-new",
    },
    "POST /api/v1/agents/{agent_id}/heartbeat": lambda w: {"state": "idle"},
    "POST /api/v1/agents/{agent_id}/lease": lambda w: {"boot_id": str(uuid.uuid4())},
    "PUT /api/v1/agents/{agent_id}/inventory": lambda w: {**_inventory()},
    "PATCH /api/v1/devices/{device_id}": lambda w: {"name": "renamed by the matrix"},
    "POST /api/v1/environments": lambda w: {"team_id": str(w.team_a), "name": "matrix env", "kind": "local"},
    "PATCH /api/v1/environments/{environment_id}": lambda w: {"description": "matrix"},
    "PUT /api/v1/environments/{environment_id}/grid-intensity": lambda w: (
        "hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,300\n",
        "text/csv",
    ),
    "POST /api/v1/workloads/facts": lambda w: {"spec": {"kind": "postmark", "postmark": {"number": 10}}},
    "POST /api/v1/workloads/jobfile": lambda w: {"text": "[global]\nrw=read\n[a]\nsize=4k\n"},
    "POST /api/v1/workloads": lambda w: {
        "team_id": str(w.team_a),
        "name": "matrix wl",
        "spec": {"jobs": [JOB]},
    },
    "POST /api/v1/runs": lambda w: {
        "agent_id": w.ids["agent_x"],
        "target_path": "/srv/bench",
        "workload_id": w.ids["workload"],
    },
    "PUT /api/v1/runs/{run_id}/result": _upload,
    "POST /api/v1/runs/{run_id}/start": lambda w: {"lease_id": w.leases["run_assigned"]},
    "POST /api/v1/runs/{run_id}/progress": lambda w: {
        "lease_id": w.leases["run_running"],
        "job_index": 0,
        "job_name": JOB["name"],
        "percent": 50.0,
        "elapsed_ns": 1,
    },
    "POST /api/v1/runs/{run_id}/failure": lambda w: {
        "lease_id": w.leases["run_running"],
        "upload_id": str(uuid.uuid4()),
        "reason": "matrix",
    },
    "POST /api/v1/run-groups": lambda w: {
        "workload_id": w.ids["workload"],
        "members": [{"agent_id": w.ids[a], "target_path": "/srv/bench"} for a in ("agent_x", "agent_y")],
    },
    "POST /api/v1/runs/{run_id}/ready": lambda w: {"lease_id": w.leases["run_running"]},
    "POST /api/v1/runs/{run_id}/started": lambda w: {
        "lease_id": w.leases["run_running"],
        "started_at": "2026-11-21T10:00:00Z",
    },
    "POST /api/v1/campaigns": lambda w: {
        "name": "matrix campaign",
        "workload_id": w.ids["workload"],
        "targets": [{"agent_id": w.ids["agent_x"], "target_path": "/srv/bench"}],
    },
    "POST /api/v1/campaigns/plan": lambda w: {
        "name": "matrix plan",
        "workload_id": w.ids["workload"],
        "sweep": {"iodepth": [1, 32]},
        "target_set": {"team_id": str(w.team_a)},
    },
    "POST /api/v1/schedules": lambda w: {
        "name": "matrix schedule",
        "every_hours": 24,
        "campaign": {
            "name": "matrix schedule",
            "workload_id": w.ids["workload"],
            "targets": [{"agent_id": w.ids["agent_x"], "target_path": "/srv/bench"}],
        },
    },
    "PATCH /api/v1/schedules/{schedule_id}": lambda w: {"enabled": False},
    "POST /api/v1/alert-channels": lambda w: {
        "team_id": str(w.team_a),
        "name": "matrix hook",
        "kind": "webhook",
        "url": "https://1.1.1.1/iowatt-matrix",
        "events": ["regression", "agent_offline"],
    },
    "PATCH /api/v1/alert-channels/{channel_id}": lambda w: {"enabled": False},
    "PUT /api/v1/series/thresholds": lambda w: {"min_change_pct": 6},
    "PATCH /api/v1/series/{series_id}": lambda w: {"pinned": True},
    "POST /api/v1/series": lambda w: {"run_id": w.ids["run_done"], "pinned": True},
    "PATCH /api/v1/series/{series_id}/detections/{detection_id}": lambda w: {
        "status": "acknowledged",
        "comment": "matrix",
    },
}
# Operations that authenticate with their body (credentials, an enrolment token): whoever holds
# those may read what they answer, so the leak check does not apply.
BODY_AUTH = {"POST /api/v1/auth/login", "POST /api/v1/agents/enroll"}
# ... or with a share link's token in the path (V2, issue 13): its holder reads the frozen view,
# the team's name and the shared runs' ids among it (test_share_links checks nothing else shows)
BODY_AUTH |= {
    "GET /api/v1/shared/{token}",
    "GET /api/v1/shared/{token}/export.csv",
    "GET /api/v1/shared/{token}/export.json",
}
# ... or with an invitation's token in the path (V1, issue 13): its holder reads the team's name
BODY_AUTH |= {"GET /api/v1/invitations/{token}", "POST /api/v1/invitations/{token}/accept"}
QUERIES: dict[str, Any] = {
    "GET /api/v1/tags": lambda w: {"team_id": str(w.team_a)},  # V3
    "GET /api/v1/comments": lambda w: {"target_kind": "run", "target_key": w.ids["run_done"]},  # V4
    "DELETE /api/v1/environments/{environment_id}": lambda w: {"force": "true"},  # V4
    "POST /api/v1/agents/{agent_id}/lease": lambda w: {"wait_s": 0},
    "POST /api/v1/runs/{run_id}/ready": lambda w: {"wait_s": 0},
    "GET /api/v1/compare": lambda w: {"runs": w.ids["run_done"]},
    "GET /api/v1/share-links": lambda w: {"team_id": str(w.team_a)},  # V2
    "GET /api/v1/compare/latency": lambda w: {"runs": w.ids["run_done"], "job": "job0"},
    "GET /api/v1/environments/{environment_id}/topology-suggestion": lambda w: {
        "agent_id": w.ids["agent_x"],
        "target_path": "/srv/bench",
    },
    "GET /api/v1/views": lambda w: {"runs": w.ids["run_done"]},
    "GET /api/v1/views/table": lambda w: {"view": "crystaldiskmark", "runs": w.ids["run_done"]},
    "GET /api/v1/series/thresholds": lambda w: {"team_id": str(w.team_a)},
    "PUT /api/v1/series/thresholds": lambda w: {"team_id": str(w.team_a)},
    "GET /api/v1/series/{series_id}/verdict": lambda w: {"run": w.ids["run_done"]},
}


def _inventory() -> dict[str, Any]:
    from tests.security.world import INVENTORY_WITH_POLICY

    return dict(INVENTORY_WITH_POLICY)


def _operations() -> list[str]:
    spec = create_app().openapi()
    methods = ("get", "put", "post", "patch", "delete")
    return [f"{m.upper()} {path}" for path, item in spec["paths"].items() for m in methods if m in item]


OPERATIONS = _operations()


def _matches(expected: str, status: int) -> bool:
    return any((e == OK and 200 <= status < 300) or e == str(status) for e in expected.split("|"))


def _request(m: Matrix, op: str, who: str, *, strangers: bool = False) -> Any:
    """`strangers`: every id of team A's objects in the request becomes a fresh random UUID."""
    method, template = op.split(" ", 1)
    operation = m.openapi["paths"][template][method.lower()]
    w = m.world
    ids = {**PATH_IDS, **PATH_IDS_BY_OP.get(op, {})}
    path = template
    for name in [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]:
        assert name in ids, f"path parameter {name!r} of {op}: add which object it names to PATH_IDS"
        path = path.replace(f"{{{name}}}", w.ids[ids[name]])
    kwargs: dict[str, Any] = {"headers": dict(w.headers[who])}
    if op in QUERIES:
        kwargs["params"] = QUERIES[op](w)
    if op in BODIES:
        body = BODIES[op](w)
        if isinstance(body, tuple):
            kwargs["content"], kwargs["headers"]["Content-Type"] = body
        else:
            kwargs["json"] = body
    else:
        assert "requestBody" not in operation, f"{op} takes a body: add a minimal valid one to BODIES"
    if strangers:
        for real in [str(w.team_a), *w.ids.values()]:
            fake = str(uuid.uuid4())
            path = path.replace(real, fake)
            for key in ("params", "json"):
                if key in kwargs:
                    kwargs[key] = json.loads(json.dumps(kwargs[key]).replace(real, fake))
    return m.client.request(method, path, **kwargs)


def test_every_operation_has_a_row() -> None:
    missing = [op for op in OPERATIONS if op not in EXPECTED]
    stale = [op for op in EXPECTED if op not in OPERATIONS]
    assert not missing, (
        "operations without a row in EXPECTED (tests/security/test_authz_matrix.py): decide who may call "
        "each and add its row (and a body in BODIES if it takes one):\n  " + "\n  ".join(missing)
    )
    assert not stale, "rows in EXPECTED for operations the API no longer has:\n  " + "\n  ".join(stale)


@pytest.mark.parametrize("op", OPERATIONS)
def test_authorization(matrix: Matrix, op: str) -> None:
    row = EXPECTED.get(op)
    if row is None:
        pytest.fail(
            f"{op} has no row in EXPECTED in tests/security/test_authz_matrix.py: decide who may call it"
        )
    assert len(row) == len(PRINCIPALS), f"the row of {op} needs one entry per principal {PRINCIPALS}"
    wrong, leaks = [], []
    for who, expected in zip(PRINCIPALS, row, strict=True):
        with matrix.isolated():
            r = _request(matrix, op, who)
        if not _matches(expected, r.status_code):
            wrong.append(f"{who}: expected {expected}, got {r.status_code} {r.text[:200]}")
        if who == "user_b" and r.status_code >= 400 and op not in BODY_AUTH:
            # no existence oracle: team A's objects answer as objects that do not exist at all
            with matrix.isolated():
                ghost = _request(matrix, op, who, strangers=True)
            same = (ghost.status_code, ghost.json().get("error")) == (r.status_code, r.json().get("error"))
            if not same:
                wrong.append(
                    f"user_b tells team A's objects from missing ones: {r.status_code} {r.text[:150]} "
                    f"vs {ghost.status_code} {ghost.text[:150]}"
                )
        if who in ("anonymous", "user_b") and op not in BODY_AUTH:
            # what the caller sent may come back (an error naming the id it asked for); nothing else
            sent = str(r.request.url) + r.request.content.decode(errors="replace")
            leaks += [
                f"{who} got {s!r} in a {r.status_code}: {r.text[:200]}"
                for s in matrix.world.secrets
                if s in r.text and s not in sent
            ]
    assert not wrong, f"{op}:\n  " + "\n  ".join(wrong)
    assert not leaks, f"{op} shows team A's data outside team A:\n  " + "\n  ".join(leaks)


# --- issue 22, S5: share links, their anonymous routes and the review PDF under abuse -------------
# Cases the route × principal table cannot express: a link whose creator left, the per-client
# throttle whatever token is sent, and every caller's answer while both PDF printers are busy.


def test_a_link_whose_creator_left_is_gone_for_every_caller(matrix: Matrix) -> None:
    from sqlalchemy import delete, select

    from backend.models import Membership, User

    w = matrix.world
    with matrix.isolated():
        member = matrix.session.scalar(select(User.id).where(User.email == w.email["member"]))
        matrix.session.execute(
            delete(Membership).where(Membership.user_id == member, Membership.team_id == w.team_a)
        )
        for who in PRINCIPALS:
            for suffix in ("", "/export.csv", "/export.json"):
                r = matrix.client.get(
                    f"/api/v1/shared/{w.ids['share_token']}{suffix}", headers=w.headers[who]
                )
                assert r.status_code == 404, (who, suffix, r.status_code, r.text[:200])
                assert w.marker not in r.text
        links = matrix.client.get(
            "/api/v1/share-links", params={"team_id": str(w.team_a)}, headers=w.headers["admin"]
        ).json()["items"]
        assert {x["id"]: x["state"] for x in links}[w.ids["share_link"]] == "creator_left"


def test_no_token_escapes_the_share_throttle(matrix: Matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    """The anonymous routes count per client address whatever bearer token comes with them."""
    from backend.auth.throttle import get_redis
    from backend.config import get_settings
    from backend.sharing import throttle

    w = matrix.world
    key = throttle.key_for("testclient")
    get_redis().delete(key)
    monkeypatch.setattr(get_settings(), "share_requests_per_min", len(PRINCIPALS))
    try:
        with matrix.isolated():
            for who in PRINCIPALS:
                assert (
                    matrix.client.get(
                        f"/api/v1/shared/{w.ids['share_token']}", headers=w.headers[who]
                    ).status_code
                    == 200
                )
            for who in PRINCIPALS:
                r = matrix.client.get(f"/api/v1/shared/{w.ids['share_token']}", headers=w.headers[who])
                assert r.status_code == 429 and "Retry-After" in r.headers, (who, r.status_code)
    finally:
        get_redis().delete(key)


def test_no_token_escapes_the_agent_dist_throttle(matrix: Matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    """The anonymous agent bundles' routes count per client address whatever token comes with
    them: an agent's or a user's token buys no more downloads than none."""
    from backend.agent_dist import throttle
    from backend.auth.throttle import get_redis
    from backend.config import get_settings

    w = matrix.world
    key = throttle.key_for("testclient")
    get_redis().delete(key)
    monkeypatch.setattr(get_settings(), "agent_dist_requests_per_min", len(PRINCIPALS))
    try:
        with matrix.isolated():
            for who in PRINCIPALS:
                r = matrix.client.get("/api/v1/agent-dist/install.sh", headers=w.headers[who])
                assert r.status_code == 200, (who, r.status_code)
            for who in PRINCIPALS:
                r = matrix.client.get("/api/v1/agent-dist", headers=w.headers[who])
                assert r.status_code == 429 and "Retry-After" in r.headers, (who, r.status_code)
    finally:
        get_redis().delete(key)


def test_busy_printers_answer_every_caller_at_once(matrix: Matrix) -> None:
    """Both PDF printers busy: the review's readers get 503 pdf_busy + Retry-After; everyone else
    the answer they get when the printers are free (401, 403, 404: no printer is looked at)."""
    import contextlib

    from backend.review import pdf

    w = matrix.world
    row = EXPECTED["GET /api/v1/reviews/{review_id}/pdf"]
    with contextlib.ExitStack() as held, matrix.isolated():
        for _ in range(pdf.SLOTS):
            held.enter_context(pdf.slot())
        for who, expected in zip(PRINCIPALS, row, strict=True):
            r = matrix.client.get(f"/api/v1/reviews/{w.ids['review']}/pdf", headers=w.headers[who])
            if expected == OK:
                assert r.status_code == 503 and r.json()["error"] == "pdf_busy", (who, r.status_code)
                assert int(r.headers["Retry-After"]) > 0
            else:
                assert _matches(expected, r.status_code), (who, expected, r.status_code)
