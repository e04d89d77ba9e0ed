"""A client bound to a workspace: its writes recorded (audit) and what they change
(effects) marked stale; builds the forms it is handed.
"""
