import sys

root, event = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:  # hooks.json starts python3 from / (no version file of the project's picks it); back to where the hook was started
    import os
    try:
        os.chdir(sys.argv[3])
    except OSError:
        pass
if sys.path[:1] == [""]:  # -c puts the current folder first: a project's own json.py or enum.py must not load
    del sys.path[0]
sys.path.insert(0, root)
sys.pycache_prefix = None  # compiled code only beside the source, in the plugin's folder: a PYTHONPYCACHEPREFIX folder may be writable where that one is not
cache = None
try:  # baton's modules from one compiled file (hooks/codecache.py); without it, only a slower start
    from hooks import codecache
    cache = codecache.install(root)
except Exception:
    pass
try:
    from hooks.adapter import main
except BaseException as exc:
    import json
    import os
    plan = os.path.join(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd(), ".baton", "plan.json")
    if event == "PreToolUse" and os.path.exists(plan):
        why = "baton's gate is not installed correctly (%s: %s), so calls are refused while a job is active. Tell the person to reinstall the baton plugin. [baton:not-installed]" % (type(exc).__name__, exc)
        print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny", "permissionDecisionReason": why}}))
    sys.stderr.write("baton: hook unavailable: %s\n" % exc)
    sys.exit(0)
status = main(event)
if cache is not None:
    try:
        cache.save()
    except Exception:
        pass
try:  # all is written and closed by now: tearing the interpreter down would only free memory (about 5 ms)
    sys.stdout.flush()
    sys.stderr.flush()
finally:
    import os
    os._exit(status)
