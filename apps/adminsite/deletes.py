"""Deleting an owner in the admin takes its read-only children with it.

Django's admin refuses a delete whose cascade reaches a model the operator may not delete
("Cannot delete user ... : your account doesn't have permission to delete the following types
of objects: log"). The audit log is read-only in the admin (nobody edits or prunes history by
hand), yet its entries belong to a user and a project: ``DELETE /v1/users/{userId}`` removes a
user's entries with the user (``apps.accounts.tasks.purge_user`` deletes every row with a
foreign key to the user, ``audit_log`` included). :class:`CascadesReadOnly` lets the admin do
the same: the confirmation page still lists those entries, and they go with their owner.
"""

from __future__ import annotations


class CascadesReadOnly:
    """A ``ModelAdmin`` mixin: rows of the models in :attr:`cascade_read_only` that the delete
    cascade reaches do not need the operator's delete permission (they are deleted with the
    object, never on their own). Other missing permissions and protected rows still refuse it."""

    cascade_read_only: tuple = ()

    def get_deleted_objects(self, objs, request):
        """``(deleted, counts, perms_needed, protected)`` as Django's, less the verbose names of
        :attr:`cascade_read_only` in ``perms_needed``."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        allowed = {str(model._meta.verbose_name) for model in self.cascade_read_only}
        return deleted, counts, {name for name in perms_needed if str(name) not in allowed}, protected
