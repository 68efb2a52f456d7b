"""confine: where and how a call runs.

Shell command policy, sandbox levels and providers, the outbound SSRF guard, egress modes,
personal-data redaction and opening paths beneath a directory without following links. This
package only groups; import the modules by their own names, it re-exports nothing.
"""
