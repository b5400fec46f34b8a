from django.urls import path

from . import views

urlpatterns = [
    path("workspaces/<str:ws>/notify/deliveries", views.DeliveriesView.as_view(), name="notify-deliveries"),
    path(
        "workspaces/<str:ws>/notify/deliveries/<str:delivery_id>", views.DeliveryView.as_view(), name="notify-delivery"
    ),
    path(
        "workspaces/<str:ws>/notify/deliveries/<str:delivery_id>/redeliver",
        views.RedeliverView.as_view(),
        name="notify-redeliver",
    ),
    path("workspaces/<str:ws>/notify/test", views.TestSendView.as_view(), name="notify-test"),
    path("me/notifications", views.MyNotificationsView.as_view(), name="notify-me"),
    path("unsubscribe", views.unsubscribe, name="notify-unsubscribe"),
]
