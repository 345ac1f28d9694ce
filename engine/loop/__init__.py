"""The supervised observe–act loop: planners propose, a person (or a policy) approves, the engine
acts and verifies, and every change is published as a typed event."""

from engine.loop.action_string import parse_action_string
from engine.loop.events import EventBus, EventStream
from engine.loop.gates import ApprovalGate, AutoApprove, CallbackGate, QueueGate, TerminalGate
from engine.loop.grounding import describe_action, describe_node, resolve_target
from engine.loop.planner import Observation, Outcome, Planner, close_planner
from engine.loop.policy import needs_approval, sensitive_reasons
from engine.loop.runner import AgentLoop
from engine.loop.scripted import ScriptedPlanner, ScriptStep, load_script

__all__ = ["AgentLoop", "EventBus", "EventStream", "Planner", "Observation", "Outcome", "close_planner",
           "ScriptedPlanner", "ScriptStep", "load_script", "ApprovalGate", "AutoApprove", "CallbackGate", "QueueGate",
           "TerminalGate", "parse_action_string", "resolve_target", "describe_node", "describe_action",
           "sensitive_reasons", "needs_approval"]
